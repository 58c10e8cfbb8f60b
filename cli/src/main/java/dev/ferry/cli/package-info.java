/**
 * The {@code ferry} command (picocli): {@code Main} and one subcommand per job; {@code ferry bench} and its
 * harnesses are in {@code cli.bench}, the user-facing errors in {@code cli.errors}. Errors reach the user as one
 * sentence and a non-zero exit; {@code --verbose} adds the stack trace. Depends on every other module; nothing
 * depends on it.
 */
package dev.ferry.cli;
