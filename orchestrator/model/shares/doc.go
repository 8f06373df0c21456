// Package shares divides the fixed quota among teams and says, at any
// instant, who is using whose slots. It is pure (no I/O, no clock reads)
// so that the policy, the simulator, the cost ledger and the metrics all
// count a loan the same way.
//
// A team's share is a number of fixed slots it is guaranteed. What the
// shares do not cover is common: owned by no one, usable by anyone's
// reclaimable work. A team using fewer slots than its share has idle
// share, of which up to LendLimit slots may be lent; a team using more
// than its share is borrowing, up to BorrowLimit slots.
//
// [Config.Split] attributes borrowed slots to lenders: common slots
// first (lending them costs no team its guarantee), then the lenders'
// lendable idle share in proportion to how much each has lendable, each
// borrower taking the same proportions. Proportions rather than an order
// keep the answer independent of team names and of which job started
// first, so the ledger and the live metrics agree without sharing state.
package shares
