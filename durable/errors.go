package durable

import "errors"

// Sentinel errors, for errors.Is. Errors returned by New and by the task
// operations wrap one of these with the detail.
var (
	// ErrOptions reports a bad field of Options, or a nil store.
	ErrOptions = errors.New("durable: bad options")
	// ErrKey reports a task key that is empty, too long, not UTF-8 or holds
	// a NUL byte (see checkKey), on every store alike.
	ErrKey = errors.New("durable: bad task key")
	// ErrPayload reports a payload over MaxPayloadLen.
	ErrPayload = errors.New("durable: payload too large")
	// ErrInFlight reports that Replace found the task running in a handler;
	// a task in flight is never rewritten.
	ErrInFlight = errors.New("durable: task in flight")
)

// Permanent marks err as not worth retrying: a Handler that returns
// Permanent(err) sends its task straight to the dead set with err as its last
// error, whatever attempts remain. Requeue brings it back. Permanent(nil) is
// nil. Use it for failures a retry cannot fix, such as an HTTP 4xx answer or a
// payload that does not parse.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// IsPermanent reports whether err, or any error it wraps, came from Permanent.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

type permanentError struct{ err error }

func (p *permanentError) Error() string { return p.err.Error() }
func (p *permanentError) Unwrap() error { return p.err }

// Causes of a handler's context cancellation other than the end of Run, for
// context.Cause.
var (
	// ErrCanceled: Cancel was called for the task while its handler ran. The
	// task is dropped whatever the handler returns.
	ErrCanceled = errors.New("durable: task cancelled")
	// ErrLeaseLost: the worker no longer owns the task (its lease ran out,
	// for example while Redis was unreachable); another delivery may run.
	ErrLeaseLost = errors.New("durable: lease lost")
)

// ErrUnrecoverable reports that Run stopped on a store failure that retrying
// will not heal; the error Run returns wraps it and the store's error. A
// Store wraps it around such errors (see Store).
var ErrUnrecoverable = errors.New("durable: store failure that retrying will not heal")

// ErrUnavailable reports a store failure that retrying may heal: the store
// unreachable, restarting, failing over, busy or timing out. Every store
// wraps it around such errors (see Store), so a caller can tell "try again
// later" (an HTTP service's 503) from a bug (500) whatever the store. The
// operation may or may not have happened, as for any store error. An error
// never wraps both it and ErrUnrecoverable.
var ErrUnavailable = errors.New("durable: store unavailable")
