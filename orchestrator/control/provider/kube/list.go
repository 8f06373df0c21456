package kube

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/ballastdev/ballast/orchestrator/control/provider"
)

// List reports this installation's worker pods from the informer's cache,
// with the pods it created that the cache has not seen yet and the ended
// instances it keeps. Its only API calls are deletes: of a pod left
// unschedulable past UnschedulableAfter (reported StockedOut from then on)
// and of a finished pod older than KeepEnded (the cluster keeps those
// until someone deletes them).
func (p *Provider) List(ctx context.Context) ([]provider.Instance, error) {
	if err := p.checkOpen(); err != nil {
		return nil, err
	}
	pods, err := p.pods.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("provider kubernetes: list pods: %w", err)
	}
	now := p.opts.Now()
	var (
		out       []provider.Instance
		stocked   []*corev1.Pod
		finished  []*corev1.Pod
		inCache   = make(map[string]bool, len(pods))
		seenFirst = map[string]bool{}
	)
	p.mu.Lock()
	for _, pod := range pods {
		inCache[pod.Name] = true
		if e, ok := p.ended[pod.Name]; ok && e.inst.State == provider.StockedOut {
			out = append(out, e.inst) // deleted as a stock-out; the delete is on its way
			continue
		}
		inst := p.instance(pod, now)
		if since, ok := p.unschedulableSince(pod, now, seenFirst); ok && pod.DeletionTimestamp == nil && now.Sub(since) >= p.opts.UnschedulableAfter {
			inst.State = provider.StockedOut
			inst.Err = fmt.Sprintf("unschedulable for %s: %s", now.Sub(since).Round(time.Second), scheduleMessage(pod))
			p.ended[pod.Name] = ended{inst: inst, at: now}
			stocked = append(stocked, pod)
		}
		if inst.State.Ended() && inst.State != provider.StockedOut && pod.DeletionTimestamp == nil && now.Sub(finishedAt(pod)) >= p.opts.KeepEnded {
			finished = append(finished, pod)
		}
		if inst.State.Live() {
			inst.ReclaimAt = p.reclaimAt(pod, now, seenFirst)
		}
		out = append(out, inst)
	}
	for name, inst := range p.created {
		switch {
		case now.Sub(inst.LaunchedAt) >= createdGrace:
			delete(p.created, name) // never seen: the cache would have it by now
		case !inCache[name]:
			out = append(out, inst)
		}
	}
	for name, e := range p.ended {
		switch {
		case now.Sub(e.at) >= p.opts.KeepEnded:
			delete(p.ended, name)
		case !inCache[name]:
			out = append(out, e.inst)
		}
	}
	for key := range p.firstSeen {
		if !seenFirst[key] {
			delete(p.firstSeen, key) // the signal went away
		}
	}
	p.mu.Unlock()

	for _, pod := range stocked {
		p.log.Warn("worker pod unschedulable too long: deleted, booked as a stock-out of its pool",
			"pod", pod.Name, "pool", pod.Labels[LabelPool], "after", p.opts.UnschedulableAfter, "reason", scheduleMessage(pod))
		// It never ran: nothing to drain.
		if err := p.delete(ctx, pod.Name, new(int64(0))); err != nil {
			p.log.Warn("stocked-out pod not deleted; trying again", "pod", pod.Name, "err", err)
			p.mu.Lock()
			delete(p.ended, pod.Name)
			p.mu.Unlock()
		}
	}
	for _, pod := range finished {
		if err := p.delete(ctx, pod.Name, nil); err != nil {
			p.log.Warn("finished worker pod not deleted", "pod", pod.Name, "err", err)
		}
	}
	sort.Slice(out, func(i, k int) bool { return out[i].ID < out[k].ID })
	return out, nil
}

// instance is the provider's view of one pod. p.mu is held.
func (p *Provider) instance(pod *corev1.Pod, now time.Time) provider.Instance {
	inst := provider.Instance{ID: pod.Name, Pool: pod.Labels[LabelPool], LaunchedAt: pod.CreationTimestamp.Time}
	if c, ok := p.created[pod.Name]; ok && !c.LaunchedAt.IsZero() {
		inst.LaunchedAt = c.LaunchedAt
	}
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		inst.State = provider.Gone
	case corev1.PodFailed:
		inst.State = provider.Failed
		inst.Err = podFailure(pod)
	case corev1.PodRunning, corev1.PodUnknown:
		inst.State = provider.Running
		inst.StartedAt = runningSince(pod)
	default:
		inst.State = provider.Launching
	}
	if pod.DeletionTimestamp != nil && inst.State.Live() {
		inst.State = provider.Releasing
	}
	if p.deleting[pod.Name] && inst.State.Live() {
		inst.State = provider.Releasing
	}
	return inst
}

// unschedulableSince reports whether the scheduler could not place the
// pod, and since when. p.mu is held; seen collects the signals still there.
func (p *Provider) unschedulableSince(pod *corev1.Pod, now time.Time, seen map[string]bool) (time.Time, bool) {
	if pod.Status.Phase != corev1.PodPending || pod.Spec.NodeName != "" {
		return time.Time{}, false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return p.since("unschedulable/"+pod.Name, c.LastTransitionTime.Time, now, seen), true
		}
	}
	return time.Time{}, false
}

// since is at when the signal carries a time, else when it was first seen.
// p.mu is held.
func (p *Provider) since(key string, at, now time.Time, seen map[string]bool) time.Time {
	seen[key] = true
	if !at.IsZero() {
		return at
	}
	first, ok := p.firstSeen[key]
	if !ok {
		first = now
		p.firstSeen[key] = now
	}
	return first
}

func scheduleMessage(pod *corev1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Message != "" {
			return c.Message
		}
	}
	return "no node fits"
}

// runningSince is when the worker container started, else when the
// kubelet took the pod.
func runningSince(pod *corev1.Pod) time.Time {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == containerName && cs.State.Running != nil {
			return cs.State.Running.StartedAt.Time
		}
	}
	if pod.Status.StartTime != nil {
		return pod.Status.StartTime.Time
	}
	return time.Time{}
}

// finishedAt is when a finished pod's worker ended, as best known.
func finishedAt(pod *corev1.Pod) time.Time {
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; cs.Name == containerName && t != nil && !t.FinishedAt.IsZero() {
			return t.FinishedAt.Time
		}
	}
	return pod.CreationTimestamp.Time
}

// podFailure says why a pod failed: the pod's reason (Evicted, say) or the
// worker's exit.
func podFailure(pod *corev1.Pod) string {
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; cs.Name == containerName && t != nil {
			return fmt.Sprintf("worker exited with code %d (%s)", t.ExitCode, t.Reason)
		}
	}
	if pod.Status.Reason != "" {
		return pod.Status.Reason + ": " + pod.Status.Message
	}
	return "pod failed"
}
