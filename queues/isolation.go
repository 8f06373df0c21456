package queues

// Isolation is what a worker tells the registry about the QoS isolation it
// enforces: which cgroup version, and for each group and limit whether it
// is in force, and if not why. A worker never reports a limit it did not
// set; status, the dashboard and the isolation metric show this as it is.
type Isolation struct {
	// Requested is the --isolation flag: auto, v2, v1 or off.
	Requested string `json:"requested"`
	// Mode is what runs: v2, v1 or off.
	Mode string `json:"mode"`
	// Reason says why Mode is off, or why auto did not pick v2.
	Reason string `json:"reason,omitempty"`
	// Limits lists every configured limit of every group.
	Limits []LimitState `json:"limits,omitempty"`
}

// LimitState is one configured limit of one QoS group on one worker.
type LimitState struct {
	Group string `json:"group"`
	// Limit names it: cpu, memory, io read_bps 254:0, egress ...
	Limit string `json:"limit"`
	// Value is the configured figure, as written for people.
	Value   string `json:"value"`
	InForce bool   `json:"in_force"`
	// Reason says why the limit is not in force.
	Reason string `json:"reason,omitempty"`
}

// InForce counts the limits in force and those that are not.
func (i Isolation) InForce() (in, out int) {
	for _, l := range i.Limits {
		if l.InForce {
			in++
		} else {
			out++
		}
	}
	return in, out
}
