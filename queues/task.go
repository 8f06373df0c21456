package queues

import (
	"encoding/json"
	"fmt"

	"github.com/ballastdev/ballast/internal/jsonenc"
)

// TaskType is the asynq task type of every Ballast delivery.
const TaskType = "ballast:job"

// Delivery is the payload of an asynq task: which attempt of which job.
type Delivery struct {
	JobID   string `json:"j"`
	Attempt int    `json:"a"`
	// Slots is how many slots the job holds, for a placed delivery (see
	// Place): the worker reserves them before it claims. 0 means 1.
	Slots int `json:"s,omitempty"`
	// Member is which member of a gang this delivery starts.
	Member int `json:"m,omitempty"`
	// Members is the size of the gang, 0 for a job that is none: its
	// worker claims the member through queues/gangs (Member.Join).
	Members int `json:"n,omitempty"`
}

// Encode returns the task payload: json.Marshal(d), written without
// reflection, for it is written for every attempt of every job
// (TestDeliveryEncodingIsJSON holds it to encoding/json's bytes).
// Hand-written JSON, kept because it is faster than the JSON library
// writing the same bytes: BenchmarkJSONLibraryEncodeDelivery.
func (d Delivery) Encode() []byte {
	o := jsonenc.Open(make([]byte, 0, 48))
	o.String("j", d.JobID)
	o.Int("a", int64(d.Attempt))
	o.OmitZero("s", int64(d.Slots))
	o.OmitZero("m", int64(d.Member))
	o.OmitZero("n", int64(d.Members))
	b, _ := o.Close() // strings and ints cannot fail
	return b
}

// DecodeDelivery parses a task payload.
func DecodeDelivery(b []byte) (Delivery, error) {
	var d Delivery
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("queues.DecodeDelivery: %w", err)
	}
	if d.JobID == "" || d.Attempt < 1 {
		return d, fmt.Errorf("queues.DecodeDelivery: payload %q lacks a job ID or attempt", b)
	}
	return d, nil
}
