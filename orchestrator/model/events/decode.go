package events

import (
	"encoding/json"
	"fmt"
)

// Decode reads one event as the bus carries it. An event without an ID or a
// type is refused: every reader (watch, history, replay) skips it rather than
// show or count something no producer wrote.
func Decode(data []byte) (Event, error) {
	var e Event
	if err := json.Unmarshal(data, &e); err != nil {
		return Event{}, err
	}
	if e.ID == "" || e.Type == "" {
		return Event{}, fmt.Errorf("no id or type")
	}
	return e, nil
}
