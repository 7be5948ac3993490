package rediswheel

import "github.com/go-timingwheel/timingwheel/durable"

// The API of durable delayed tasks is package durable's, the same on every
// store; rediswheel is its Redis store. These names keep code written
// against rediswheel before durable existed compiling unchanged: each is
// durable's own (a type alias, or the same error value, so errors.Is and
// type switches work across both packages). New code may use either.

type (
	Queue           = durable.Queue
	Handler         = durable.Handler
	Task            = durable.Task
	Item            = durable.Item
	TaskOption      = durable.TaskOption
	TaskInfo        = durable.TaskInfo
	Delivery        = durable.Delivery
	State           = durable.State
	DeadTask        = durable.DeadTask
	Stats           = durable.Stats
	ShardStats      = durable.ShardStats
	StateCounts     = durable.StateCounts
	Result          = durable.Result
	Mux             = durable.Mux
	Schedule        = durable.Schedule
	ScheduleFunc    = durable.ScheduleFunc
	HTTPTask        = durable.HTTPTask
	HTTPOption      = durable.HTTPOption
	HTTPStatusError = durable.HTTPStatusError
	Observer        = durable.Observer
	NoopObserver    = durable.NoopObserver
	AddEvent        = durable.AddEvent
	ClaimEvent      = durable.ClaimEvent
	StartEvent      = durable.StartEvent
	FinishEvent     = durable.FinishEvent
	SettleEvent     = durable.SettleEvent
	TrimEvent       = durable.TrimEvent
	StoreErrorEvent = durable.StoreErrorEvent
	StoreOp         = durable.StoreOp
)

const (
	StateScheduled = durable.StateScheduled
	StateRetrying  = durable.StateRetrying
	StateInFlight  = durable.StateInFlight
	StateDead      = durable.StateDead
	StateDone      = durable.StateDone
	StateCancelled = durable.StateCancelled

	OpAdd    = durable.OpAdd
	OpClaim  = durable.OpClaim
	OpSettle = durable.OpSettle
	OpExtend = durable.OpExtend

	DefaultLease       = durable.DefaultLease
	DefaultMaxAttempts = durable.DefaultMaxAttempts
	DefaultConcurrency = durable.DefaultConcurrency
	DefaultMaxDead     = durable.DefaultMaxDead
	DefaultMaxRetained = durable.DefaultMaxRetained
	DefaultHistoryLen  = durable.DefaultHistoryLen
	MinLease           = durable.MinLease
	MaxKeyLen          = durable.MaxKeyLen
	MaxHistoryLen      = durable.MaxHistoryLen
	MaxListLimit       = durable.MaxListLimit
	MaxPeriodicNameLen = durable.MaxPeriodicNameLen
	MaxPostponements   = durable.MaxPostponements
	MaxRetryAfter      = durable.MaxRetryAfter
	MaxTypeLen         = durable.MaxTypeLen

	HTTPTaskType         = durable.HTTPTaskType
	DefaultHTTPTimeout   = durable.DefaultHTTPTimeout
	HeaderIdempotencyKey = durable.HeaderIdempotencyKey
	HeaderAttempt        = durable.HeaderAttempt
	// Deprecated: read HeaderAttempt; see durable.HeaderAttemptRediswheel.
	HeaderAttemptRediswheel = durable.HeaderAttemptRediswheel
)

// The sentinel errors are durable's values.
var (
	ErrOptions         = durable.ErrOptions
	ErrKey             = durable.ErrKey
	ErrInFlight        = durable.ErrInFlight
	ErrCanceled        = durable.ErrCanceled
	ErrLeaseLost       = durable.ErrLeaseLost
	ErrHandlerTimeout  = durable.ErrHandlerTimeout
	ErrUnrecoverable   = durable.ErrUnrecoverable
	ErrNotFound        = durable.ErrNotFound
	ErrState           = durable.ErrState
	ErrCursor          = durable.ErrCursor
	ErrLimit           = durable.ErrLimit
	ErrTaskOption      = durable.ErrTaskOption
	ErrNoHandler       = durable.ErrNoHandler
	ErrNotHTTPTask     = durable.ErrNotHTTPTask
	ErrRedirectRefused = durable.ErrRedirectRefused
	ErrInvalidURL      = durable.ErrInvalidURL
	ErrInvalidMethod   = durable.ErrInvalidMethod
	ErrInvalidHeader   = durable.ErrInvalidHeader
	ErrInvalidTimeout  = durable.ErrInvalidTimeout
	ErrPeriodicName    = durable.ErrPeriodicName
	ErrPeriodicRemoved = durable.ErrPeriodicRemoved
	ErrPeriodicStalled = durable.ErrPeriodicStalled
	ErrScheduleEnded   = durable.ErrScheduleEnded
)

// The functions are durable's.
var (
	NewMux             = durable.NewMux
	Every              = durable.Every
	Permanent          = durable.Permanent
	IsPermanent        = durable.IsPermanent
	SetResult          = durable.SetResult
	RetryAfter         = durable.RetryAfter
	RetryAfterError    = durable.RetryAfterError
	DefaultBackoff     = durable.DefaultBackoff
	ExponentialBackoff = durable.ExponentialBackoff
	TaskType           = durable.TaskType
	TaskTimeout        = durable.TaskTimeout
	TaskMaxAttempts    = durable.TaskMaxAttempts
	TaskBackoff        = durable.TaskBackoff
	EncodeHTTPTask     = durable.EncodeHTTPTask
	DecodeHTTPTask     = durable.DecodeHTTPTask
	HTTPHandler        = durable.HTTPHandler
	HTTPDefaultTimeout = durable.HTTPDefaultTimeout
	HTTPMaxRedirects   = durable.HTTPMaxRedirects
)
