package natsqueue_test

const workerEnv = "NATSQUEUE_TEST_WORKER"
