package checkpoints

// AllKeys names one key of every family the ledger writes, for the test
// that checks their names.
func (s *Store) AllKeys() []string { return []string{s.list("j"), s.uploads()} }
