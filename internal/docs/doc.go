// Package docs holds the tests that keep the documentation (README.md,
// docs/ and deploy/) honest as the code moves: every command a page
// marks as runnable still parses (see docs/README.md, "Runnable
// commands"), and every relative link reaches a file and, with an
// anchor, a heading of it. It has no code of its own.
package docs
