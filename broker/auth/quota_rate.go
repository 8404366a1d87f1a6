package auth

import "math"

// rate measures what is recorded per second as Kafka's Rate over a
// SampledStat does: samples of one window each (quota.window.size.seconds),
// samples+1 of them kept (quota.window.num and one overlapping the
// window's start), and the rate their sum over the time they cover, taken
// as at least samples-1 whole windows so that a client's first burst is
// not measured over a few milliseconds.
type rate struct {
	samples  []sample
	current  int
	lastUsed int64 // ms, the last record
}

// sample is one window's sum.
type sample struct {
	start, last int64 // ms: when the window began, its last record
	value       float64
}

// rateConfig is the quota window: samples windows of window ms.
type rateConfig struct {
	samples int
	window  int64
}

// record adds v at now (ms), moving to a new sample when the current one
// is a whole window old.
func (r *rate) record(cfg rateConfig, v float64, now int64) {
	if len(r.samples) == 0 {
		r.samples = append(make([]sample, 0, cfg.samples+1), sample{start: now, last: now})
	}
	s := &r.samples[r.current]
	if now-s.start >= cfg.window {
		r.current = (r.current + 1) % (cfg.samples + 1)
		if r.current >= len(r.samples) {
			r.samples = append(r.samples, sample{})
		}
		s = &r.samples[r.current]
		*s = sample{start: now, last: now}
	}
	s.value += v
	s.last = now
	r.lastUsed = now
}

// purge resets the samples with no record in the last samples windows.
func (r *rate) purge(cfg rateConfig, now int64) {
	expire := int64(cfg.samples) * cfg.window
	for i := range r.samples {
		if now-r.samples[i].last >= expire {
			r.samples[i] = sample{start: now, last: now}
		}
	}
}

// windowMs is the time the rate is measured over at now, in ms (Kafka's
// Rate.windowSize).
func (r *rate) windowMs(cfg rateConfig, now int64) int64 {
	r.purge(cfg, now)
	oldest := now
	for _, s := range r.samples {
		oldest = min(oldest, s.start)
	}
	elapsed := now - oldest
	if full, least := elapsed/cfg.window, int64(cfg.samples-1); full < least {
		elapsed += (least - full) * cfg.window
	}
	return max(elapsed, 1)
}

// measure is the rate per second at now.
func (r *rate) measure(cfg rateConfig, now int64) float64 {
	ms := r.windowMs(cfg, now)
	sum := 0.0
	for _, s := range r.samples {
		sum += s.value
	}
	return sum / (float64(ms) / 1000)
}

// throttleMs is how long, in ms, the rate must see no record to fall back
// to limit, as Kafka's QuotaUtils.throttleTime computes it: a rate O over
// a window W comes down to the quota T after X = (O - T) / T * W.
func (r *rate) throttleMs(cfg rateConfig, limit float64, now int64) int64 {
	observed := r.measure(cfg, now)
	if observed <= limit {
		return 0
	}
	return int64(math.Round((observed - limit) / limit * float64(r.windowMs(cfg, now))))
}
