package jobs

import "fmt"

// Class says which capacity a job may run on.
type Class string

const (
	// ClassCore must run on fixed quota and never on spot capacity.
	ClassCore Class = "core"
	// ClassBurst runs on elastic capacity by default and may borrow idle fixed quota.
	ClassBurst Class = "burst"
)

// ParseClass accepts "core" or "burst".
func ParseClass(s string) (Class, error) {
	switch Class(s) {
	case ClassCore, ClassBurst:
		return Class(s), nil
	}
	return "", fmt.Errorf("unknown class %q (use core or burst)", s)
}

// Rhythm says how a template's load arrives; it picks the default class.
type Rhythm string

const (
	// RhythmPeriodic is cron-driven work such as daily cleaning or weekly retraining.
	RhythmPeriodic Rhythm = "periodic"
	// RhythmPulse is ad hoc, short-lived work such as a one-off load test.
	RhythmPulse Rhythm = "pulse"
	// RhythmMixed is a steady base with peaks (30% most of the month, 100% at month end).
	RhythmMixed Rhythm = "mixed"
	// RhythmSweep is one trial of a hyperparameter sweep.
	RhythmSweep Rhythm = "sweep"
)

// ParseRhythm accepts periodic, pulse, mixed or sweep.
func ParseRhythm(s string) (Rhythm, error) {
	switch Rhythm(s) {
	case RhythmPeriodic, RhythmPulse, RhythmMixed, RhythmSweep:
		return Rhythm(s), nil
	}
	return "", fmt.Errorf("unknown rhythm %q (use periodic, pulse, mixed or sweep)", s)
}

// DefaultClass is the class a rhythm implies when a template names none:
// periodic work is the steady base that fixed quota is bought for; everything
// else arrives in bursts and belongs on elastic capacity.
func (r Rhythm) DefaultClass() Class {
	if r == RhythmPeriodic {
		return ClassCore
	}
	return ClassBurst
}
