// Package advisor reads one window of Ballast's history and says what an
// operator should change (the fixed quota, the watermarks, where a template
// runs), each piece of advice with the figures it rests on.
//
// The rules, in the order their advice is returned:
//
//   - prices: without both prices per slot-hour there is no break-even, so
//     the advice that needs one is skipped, and that is said first;
//   - elastic waits: the worst 10-minute sliding window's p95 wait for
//     elastic capacity above a threshold (default 10 min);
//   - watermarks: a band under 20 points (work flaps between fixed and
//     elastic) or a high watermark over 90% (no headroom left for core);
//   - fixed idle: the quota's mean idle share above 30%, with the quota
//     that would have paid for itself;
//   - shapes: jobs too big for every elastic machine (only the quota can
//     run them; a warning when the quota is under the floor they set) and
//     jobs requiring labels no pool carries, with a suggested pool of big
//     enough machines replayed over the window's finished jobs;
//   - templates: burst templates running longer than the break-even (24 h x
//     fixed / elastic price) each day belong on fixed, core templates
//     running less could go elastic, shown beside the source's "over 8 h a
//     day belongs on fixed", which only holds at a price ratio of 3.
//
// A balanced window yields nothing: no advice means nothing to change, so
// the rules stay quiet unless a figure is over its threshold.
//
// The package is pure like policy: no I/O, no goroutines, no clock reads (the shape rule's replay runs the simulator, which is pure
// too). The window's bounds come in as data, so a window always gives
// the same advice in the same order, whatever the order of its slices, and
// tests can build any situation by hand.
package advisor
