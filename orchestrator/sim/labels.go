package sim

// carries reports whether labels hold every label in req with its value,
// the rule the policy places by: a worker carries its pool's labels.
func carries(labels, req map[string]string) bool {
	for k, v := range req {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}
