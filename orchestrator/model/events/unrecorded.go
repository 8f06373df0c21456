package events

// DataUnrecorded is the key, in a job end event's Data, that marks an end
// no job record took: the record was gone (Redis lost its data while the
// job ran), and the value says so. The event is then the only trace that
// the run ended, and recovery reads it so as not to run the job again.
const DataUnrecorded = "unrecorded"
