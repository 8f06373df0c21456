package cli

import (
	"context"
	"log/slog"
)

// withoutDurability is the terminal's log handler for `ballast dev` on its
// embedded in-memory Redis: the controller's warnings that Redis does not
// keep accepted jobs (records with a "durable" attribute) are dropped
// there, because dev has already said so in its NOTICE and a new user's
// first screen should not carry a warning that asks them to fix nothing.
// The JSON log file still gets them; every other warning still shows.
type withoutDurability struct{ slog.Handler }

func (h withoutDurability) Handle(ctx context.Context, r slog.Record) error {
	durability := false
	r.Attrs(func(a slog.Attr) bool {
		durability = a.Key == "durable"
		return !durability
	})
	if durability {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h withoutDurability) WithAttrs(as []slog.Attr) slog.Handler {
	return withoutDurability{h.Handler.WithAttrs(as)}
}

func (h withoutDurability) WithGroup(name string) slog.Handler {
	return withoutDurability{h.Handler.WithGroup(name)}
}
