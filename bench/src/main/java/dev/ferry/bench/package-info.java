/** JMH microbenchmarks; nothing depends on this module. */
package dev.ferry.bench;
