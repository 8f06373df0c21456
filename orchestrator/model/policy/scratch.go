package policy

// scratch is the working memory of one Decide that the next one reuses.
// A simulation decides hundreds of thousands of times, and building the
// view's, the planner's and the placer's maps afresh each time was over
// half the bytes a plan allocated: the collector's work and the
// allocations took a fifth of a simulation's time. Nothing in it outlives
// the Decide that filled it: the plan's actions are never taken from
// here, since a caller keeps them. An Index decides one tick at a time,
// as it is changed one job at a time, so one scratch per index is enough.
type scratch struct {
	fixedRegions map[string]bool
	demand       map[string]*poolDemand
	demands      map[string]*poolDemand // by pool name, kept across ticks
	elastic      []*poolDemand
	byPrice      []*poolDemand

	moved     map[string]Queue
	movedJobs []*Job
	tick      map[*workerRec]*slotUse
	placing   map[string]bool

	reserved map[placeGroup]bool
	closed   map[*workerRec]bool
	unfit    map[jobShape]bool
	grows    map[jobShape]bool
	idle     map[jobShape]bool
	maxFree  []targetFree
	room     []*workerRec

	// drained are the workers rule 4 drains this tick; saved is rule 5's
	// copy of the pools' counts while it tries a repack.
	drained []*workerRec
	saved   []poolDemand
}

// scratchOf returns ix's scratch, emptied for a new Decide.
func (ix *Index) scratchOf() *scratch {
	s := ix.scr
	if s == nil {
		s = &scratch{
			fixedRegions: map[string]bool{}, demand: map[string]*poolDemand{}, demands: map[string]*poolDemand{},
			moved: map[string]Queue{}, tick: map[*workerRec]*slotUse{}, placing: map[string]bool{},
			reserved: map[placeGroup]bool{}, closed: map[*workerRec]bool{},
			unfit: map[jobShape]bool{}, grows: map[jobShape]bool{}, idle: map[jobShape]bool{},
		}
		ix.scr = s
		return s
	}
	clear(s.fixedRegions)
	clear(s.demand)
	clear(s.elastic) // drop the pointers, so a removed pool's demand can go
	s.elastic, s.byPrice = s.elastic[:0], s.byPrice[:0]
	clear(s.moved)
	clear(s.movedJobs)
	s.movedJobs = s.movedJobs[:0]
	clear(s.tick)
	clear(s.placing)
	clear(s.reserved)
	clear(s.closed)
	clear(s.unfit)
	clear(s.grows)
	clear(s.idle)
	s.maxFree = s.maxFree[:0]
	clear(s.room)
	s.room = s.room[:0]
	clear(s.drained)
	s.drained = s.drained[:0]
	return s
}

// keepScratch hands the lists this tick grew back to the scratch, so the
// next tick starts with their room.
func (p *planner) keepScratch() {
	s := p.scr
	s.elastic, s.byPrice, s.movedJobs = p.elastic, p.byPrice, p.movedJobs
	if pl := p.placer; pl != nil {
		s.maxFree, s.room = pl.maxFree, pl.room
	}
}

// demandFor returns a zeroed demand of pool p, reusing last tick's.
func (s *scratch) demandFor(p *Pool) *poolDemand {
	d := s.demands[p.Name]
	if d == nil {
		d = &poolDemand{}
		s.demands[p.Name] = d
	}
	m, g, of := d.members, d.gaps, d.gapsOf
	clear(m)
	clear(g)
	clear(of)
	*d = poolDemand{pool: p, members: m, gaps: g[:0], gapsOf: of}
	return d
}
