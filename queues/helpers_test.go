package queues_test

import (
	"github.com/hibiken/asynq"

	"github.com/ballastdev/ballast/queues"
)

// testenvDeleteTasks removes every pending task of q, as if the enqueue had
// never happened.
func testenvDeleteTasks(s *queues.Store, q queues.Queue) error {
	insp := asynq.NewInspectorFromRedisClient(s.Redis())
	_, err := insp.DeleteAllPendingTasks(s.Namespace().AsynqQueue(q))
	return err
}
