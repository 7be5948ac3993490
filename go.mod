module github.com/go-timingwheel/timingwheel

go 1.24
