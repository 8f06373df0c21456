// Package devtools holds the commands of ballast-tools that production
// machines do not run: the throughput and hybrid-reaction benchmarks and
// the dashboard screenshot in headless Chromium. They live apart from
// internal/cli so the ballast binary links neither the benchmarks nor the
// Chrome DevTools driver; cmd/ballast-tools adds them to ballast's own
// commands through cli.RunWith.
package devtools
