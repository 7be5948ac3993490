package timingwheel

import "errors"

// Errors returned by New. Test for them with errors.Is.
var (
	// ErrInvalidTick: the tick is not positive.
	ErrInvalidTick = errors.New("timingwheel: tick must be positive")
	// ErrInvalidWheelSize: the wheel size is below 2 or above MaxWheelSize.
	ErrInvalidWheelSize = errors.New("timingwheel: wheel size must be between 2 and MaxWheelSize")
	// ErrInvalidOption: an Option was given an argument it cannot use.
	ErrInvalidOption = errors.New("timingwheel: invalid option")
)
