/**
 * The {@code ferry} command (picocli): one subcommand per job. Errors reach the user as one sentence and a
 * non-zero exit; {@code --verbose} adds the stack trace. Depends on every other module; nothing depends on it.
 */
package dev.ferry.cli;
