package devtools

import "github.com/ballastdev/ballast/internal/cli"

// Commands are the tools, by command name, for cli.RunWith.
func Commands() map[string]cli.Tool {
	return map[string]cli.Tool{
		"screenshot":   {Summary: "open the controller's dashboard in headless Chromium and write a PNG of it", Run: runScreenshot},
		"bench":        {Summary: "measure throughput and start latency against raw asynq", Run: runBench},
		"bench-hybrid": {Summary: "measure the hybrid controller's reclaim, scale-up and release reactions", Run: runBenchHybrid},
	}
}
