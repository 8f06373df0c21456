package isolation

import "fmt"

// Mode is the cgroup version a worker is asked to use.
type Mode string

// Modes of --isolation.
const (
	// Auto uses v2 when its controllers are available, else v1, else off.
	Auto Mode = "auto"
	V2   Mode = "v2"
	V1   Mode = "v1"
	// Off sets no limit and measures nothing.
	Off Mode = "off"
)

// ParseMode reads an --isolation value.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Auto, V2, V1, Off:
		return m, nil
	case "":
		return Auto, nil
	}
	return "", fmt.Errorf("isolation %q: use auto, v2, v1 or off", s)
}
