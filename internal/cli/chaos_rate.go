package cli

import (
	"context"
	"log/slog"
	"math"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/registry"
	"github.com/ballastdev/ballast/workers"
)

// spotChaos reclaims spot workers at random, as a spot market does, so a
// demo shows jobs surviving reclaims. perHour is the expected number of
// reclaims per spot worker per hour; each is a real spot notice.
type spotChaos struct {
	perHour float64
	notice  time.Duration
	every   time.Duration
	rng     *rand.Rand
	nc      *nats.Conn
	store   *queues.Store
	cfg     config.Config
	log     *slog.Logger
}

// start runs the reclaim loop until ctx ends. The loop owns nothing that
// needs stopping beyond its goroutine, which ends with ctx.
func (c *spotChaos) start(ctx context.Context) {
	if c.perHour <= 0 {
		return
	}
	go func() {
		t := time.NewTicker(c.every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				c.round(ctx)
			}
		}
	}()
}

// round gives each spot worker one chance to be reclaimed. A Poisson process
// with rate perHour has probability 1-exp(-rate*dt) of an event in dt.
func (c *spotChaos) round(ctx context.Context) {
	ws, err := registry.New(c.store).Workers(ctx)
	if err != nil {
		return
	}
	p := 1 - math.Exp(-c.perHour*c.every.Hours())
	for _, w := range ws {
		if c.cfg.Pools[w.Pool].Kind != config.PoolSpot || w.Draining || c.rng.Float64() >= p {
			continue
		}
		if err := registry.New(c.store).RequestSpotNotice(ctx, w.ID, time.Now().Add(c.notice)); err != nil {
			c.log.Warn("random spot reclaim not recorded", "worker", w.ID, "err", err)
			continue
		}
		msg := workers.ControlMessage{Action: workers.ControlSpotNotice, NoticeSeconds: int(c.notice.Seconds())}
		if err := workers.NotifyControl(c.nc, subjects(c.cfg), w.ID, msg); err != nil {
			// Recorded: the worker acts at its next heartbeat.
			c.log.Warn("random spot reclaim wake-up not sent", "worker", w.ID, "err", err)
		}
		c.log.Warn("random spot reclaim (demo)", "worker", w.ID, "notice", c.notice)
	}
}
