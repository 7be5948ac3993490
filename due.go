package timingwheel

// due is a timer's due tick and its state packed into one word, so that a
// Timer stays at 48 bytes. The state takes the top two bits; the tick the
// other 62, which is far more than any deadline needs: dueTick saturates at
// maxDueTick, 2^62-1 ticks (146 years at a 1 ns tick, 146 million years at
// 1 ms), and a timer due then is never fired, so saturation can only make a
// timer later, never early.
type due uint64

const (
	stateShift = 62
	maxDueTick = 1<<stateShift - 1
)

func makeDue(tick int64, s timerState) due { return due(tick) | due(s)<<stateShift }

func (d due) tick() int64       { return int64(d & maxDueTick) }
func (d due) state() timerState { return timerState(d >> stateShift) }
