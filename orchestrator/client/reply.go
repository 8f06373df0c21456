package client

import (
	"encoding/json"
	"fmt"

	"github.com/ballastdev/ballast/orchestrator/intake"
)

// decodeReply reads an intake reply: a receipt, or an error body. status is
// the HTTP status, 0 over NATS.
func decodeReply(data []byte, status int) (intake.Receipt, error) {
	var r struct {
		Error *intake.Error `json:"error"`
		intake.Receipt
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return intake.Receipt{}, fmt.Errorf("the reply is not from a Ballast intake (%w): %.200q", err, data)
	}
	if r.Error != nil {
		return intake.Receipt{}, &Error{Code: r.Error.Code, Message: r.Error.Message, Problems: r.Error.Problems, Status: status}
	}
	if r.JobID == "" {
		return intake.Receipt{}, fmt.Errorf("the reply has neither a job ID nor an error: %.200q", data)
	}
	return r.Receipt, nil
}
