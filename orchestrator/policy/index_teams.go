package policy

// SetTeamUsage sets each team's decayed fixed-slot usage, as
// Snapshot.TeamUsage: the caller (controller or simulator) keeps a
// shares.Decayed and hands its Usage over before each Decide. The index
// keeps the map as given and never writes it.
func (ix *Index) SetTeamUsage(u map[string]float64) { ix.teamUsage = u }

// TeamUsage returns what SetTeamUsage set, for the rules of team shares.
func (ix *Index) TeamUsage() map[string]float64 { return ix.teamUsage }
