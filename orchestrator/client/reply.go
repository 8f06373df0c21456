package client

import (
	"encoding/json"
	"fmt"

	"github.com/ballastdev/ballast/orchestrator/control/intake"
)

// decodeReply reads an intake reply to a request of kind k: a receipt, or
// an error body. status is the HTTP status, 0 over NATS.
func decodeReply[V, R any](data []byte, status int, k kind[V, R]) (R, error) {
	var zero R
	// A receipt is read first, and the reply probed for an error only when
	// it is none: a batch's receipt is large, and reading it twice was a
	// good part of the caller's wait. The intake's replies are either one
	// or the other, never both.
	var r R
	var rerr error
	if k.decode != nil {
		rerr = k.decode(data, &r)
	} else {
		rerr = json.Unmarshal(data, &r)
	}
	if rerr == nil && k.id(r) != "" {
		return r, nil
	}
	var probe struct {
		Error *intake.Error `json:"error"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return zero, fmt.Errorf("the reply is not from a Ballast intake (%w): %.200q", err, data)
	}
	if probe.Error != nil {
		return zero, &Error{Code: probe.Error.Code, Message: probe.Error.Message, Problems: probe.Error.Problems, Status: status}
	}
	if rerr != nil {
		return zero, fmt.Errorf("the reply is not from a Ballast intake (%w): %.200q", rerr, data)
	}
	return zero, fmt.Errorf("the reply has neither a %s ID nor an error: %.200q", k.noun, data)
}
