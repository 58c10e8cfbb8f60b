/**
 * How a failure reaches the user of {@code ferry}: {@code UserError} (a problem the user can fix, and its exit
 * code) and {@code Errors.oneSentence}. Every command package uses it; it depends on the JDK only.
 */
package dev.ferry.cli.errors;
