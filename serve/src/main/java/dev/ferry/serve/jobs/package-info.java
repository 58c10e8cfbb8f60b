/**
 * Jobs registered on a node and ferry's own API: {@code Job} (a plan and what its consumers report),
 * {@code RunningJob} (its epoch, position and prefetcher), {@code JobRegistry}, {@code History} (the status
 * page's charts), {@code JobAdvice} (predicted egress and the advisor), {@code JobLimits}, and {@code ControlApi}
 * (the {@code /_ferry/} API: plans, progress, status, flush, metrics, the status page). Calls down into
 * {@code serve.node}; uses {@code serve.protocol} and {@code serve.s3} for replies; never calls the front or
 * {@code Daemon}.
 */
package dev.ferry.serve.jobs;
