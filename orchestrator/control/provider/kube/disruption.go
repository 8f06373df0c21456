package kube

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// reclaimAt is when the pod's node goes, if something says it will: the
// pod's DisruptionTarget condition (the pod is about to be evicted or
// preempted) or an interruption taint on its node. It is the signal's time
// plus SpotNotice, and no later than the pod's deletion deadline. Zero when
// nothing says so. p.mu is held; seen collects the signals still there.
func (p *Provider) reclaimAt(pod *corev1.Pod, now time.Time, seen map[string]bool) time.Time {
	var at time.Time
	earliest := func(t time.Time) {
		if at.IsZero() || t.Before(at) {
			at = t
		}
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			earliest(p.since("disruption/"+pod.Name, c.LastTransitionTime.Time, now, seen).Add(p.opts.SpotNotice))
		}
	}
	if pod.Spec.NodeName != "" {
		if node, err := p.nodes.Get(pod.Spec.NodeName); err == nil {
			if t, ok := p.interrupted(node, now, seen); ok {
				earliest(t.Add(p.opts.SpotNotice))
			}
		}
	}
	if !at.IsZero() && pod.DeletionTimestamp != nil && pod.DeletionTimestamp.Time.Before(at) {
		at = pod.DeletionTimestamp.Time
	}
	return at
}

// interrupted reports whether node carries an interruption taint (or is
// cordoned), and since when.
func (p *Provider) interrupted(node *corev1.Node, now time.Time, seen map[string]bool) (time.Time, bool) {
	var (
		since time.Time
		found bool
	)
	note := func(key string, added time.Time) {
		t := p.since("taint/"+node.Name+"/"+key, added, now, seen)
		if !found || t.Before(since) {
			since, found = t, true
		}
	}
	for _, t := range node.Spec.Taints {
		if slices.Contains(p.opts.InterruptionTaints, t.Key) {
			var added time.Time
			if t.TimeAdded != nil {
				added = t.TimeAdded.Time
			}
			note(t.Key, added)
		}
	}
	// A cordon shows as spec.unschedulable before (or without) its taint.
	if node.Spec.Unschedulable && slices.Contains(p.opts.InterruptionTaints, corev1.TaintNodeUnschedulable) {
		note(corev1.TaintNodeUnschedulable, time.Time{})
	}
	return since, found
}
