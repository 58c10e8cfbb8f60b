/**
 * Jobs registered on a node and ferry's own API: {@code Job} (a plan and what its consumers report),
 * {@code RunningJob} (its epoch, position and prefetcher), {@code JobRegistry}, {@code History} (the status
 * page's charts), {@code JobAdvice} (predicted egress and the advisor), {@code JobLimits}, and {@code ControlApi},
 * which routes the {@code /_ferry/} API by resource: {@code JobsApi} (registration, read by
 * {@code RegistrationRequest}; orders, checkpoints, progress), {@code StatusApi} (the status and its page),
 * {@code FlushApi} (the write-back fence) and {@code MetricsApi}, with {@code ApiJson} for JSON in and out. Calls
 * down into {@code serve.node} (its plan sink, its group, its tiers and counters) and answers the node's one
 * question, who read a block last epoch ({@code JobRegistry} is its {@code BlockHolders}); uses {@code serve.protocol}
 * for replies; never calls the front or {@code Daemon}: what the status shows of the front comes in as a
 * {@code ServeSnapshot}.
 */
package dev.ferry.serve.jobs;
