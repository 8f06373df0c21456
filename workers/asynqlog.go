package workers

import (
	"fmt"

	"github.com/hibiken/asynq"
	"log/slog"
	"os"
)

// AsynqLogger routes asynq's own logging into slog, so asynq's messages carry
// the same attributes as Ballast's.
func AsynqLogger(l *slog.Logger) asynq.Logger { return asynqLogger{l} }

type asynqLogger struct{ l *slog.Logger }

func (a asynqLogger) Debug(args ...any) { a.l.Debug(fmt.Sprint(args...), "src", "asynq") }
func (a asynqLogger) Info(args ...any)  { a.l.Info(fmt.Sprint(args...), "src", "asynq") }
func (a asynqLogger) Warn(args ...any)  { a.l.Warn(fmt.Sprint(args...), "src", "asynq") }
func (a asynqLogger) Error(args ...any) { a.l.Error(fmt.Sprint(args...), "src", "asynq") }

// Fatal is called by asynq on unrecoverable errors; it logs and exits, as
// asynq's own logger does.
func (a asynqLogger) Fatal(args ...any) {
	a.l.Error(fmt.Sprint(args...), "src", "asynq")
	os.Exit(1)
}
