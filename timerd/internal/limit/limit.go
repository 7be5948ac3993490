// Package limit bounds the request rate of timerd's API, per client address,
// with token buckets; over the limit a request gets 429 rate_limited and a
// Retry-After header.
//
// Contract (implemented by the server helper):
//
//	func New(perSecond float64, burst int) *Limiter // perSecond 0: no limit
//	func (l *Limiter) Wrap(next http.Handler) http.Handler
package limit
