// Package readme holds the test that runs the README's quick start, as a
// new user would, on a fresh copy of the repository: build the binary,
// start ballast dev, and run the second terminal's commands against it.
// It has no code of its own.
package readme
