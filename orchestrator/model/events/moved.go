package events

// TypeJobMoved: the controller moved a queued job to another queue as a
// new attempt (lent to fixed capacity, sent back to elastic, re-homed to
// another region). The attempt counter counts deliveries, so a move bumps
// it without any run; this event is what lets a reader say why an attempt
// never started. Reason says which move and which rule.
const TypeJobMoved Type = "job.moved"
