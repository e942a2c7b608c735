// Package actors hosts flinksim's components as Hollywood actors: node.go
// hosts any component of sim/ (the JobManager, the CheckpointCoordinator,
// the ResourceManager, each TaskManager, each subtask, each input channel,
// the Kafka broker) as an actor of its own that takes its deliveries from
// the scheduler and answers with one Done; scheduler.go is the Hollywood
// driver of the kernel (sim/kernel). Flink's rules live in sim/, as state
// machines stepped with one envelope at a time; nothing here decides
// anything Flink does.
package actors
