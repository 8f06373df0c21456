// Package planner sizes the fixed quota from history: a trace of jobs (a
// file, a public cluster trace, or Ballast's own job records) gives a
// demand curve, and three answers are computed side by side:
//
//   - the rule of thumb of our source, minimum demand x 1.2;
//   - the cost-optimal level for the configured prices: the quota that
//     demand reaches for a share fixed/elastic price of the time (below it a
//     fixed slot is busy often enough to beat paying elastic rates);
//   - a simulated sweep over quota sizes and watermarks, run through the
//     live policy by package sim, picking the cheapest plan that meets a
//     wait target. This one sees what the closed forms do not: start-up
//     delays, billing granularity, preemptions and lost work.
//
// Per template it reports daily run hours against the break-even (24 h x
// fixed / elastic price), beside the "over 8 h a day belongs on fixed" rule
// that only holds when elastic costs three times fixed. Reports are tables,
// SVG charts and a self-contained HTML page.
package planner
