/**
 * One secret-detection rule, as data. A rule runs its regular expression only when one of
 * its keywords occurs in the text (compared in lower case), as gitleaks does: most text holds
 * no keyword at all, so most rules never run.
 */
export interface SecretRule {
  /** The rule id, used in the marker `[REDACTED:<id>]`. */
  id: string;
  /** Lower-case literals; the rule runs when any of them occurs in the lower-cased text. */
  keywords: readonly string[];
  /** A JavaScript regular expression source, compiled with the `g` flag (plus `flags`). */
  pattern: string;
  /**
   * How many characters before the first keyword a match may start (default 0: the keyword
   * starts the match). The regex starts scanning there, not at the start of the text.
   */
  lookback?: number;
  /** Extra flags, for example `i`; with `d` a secret group is located by its indices, so it need not end the match. */
  flags?: string;
  /**
   * Capture groups holding the secret; the first one that matched is taken. Without them the
   * whole match is the secret. A secret group must end the match (trailing context goes in a
   * look-ahead), so that its position is the end of the match minus its length.
   */
  groups?: readonly number[];
  /** Least Shannon entropy (bits per character) of the secret; below it the match is kept. */
  entropy?: number;
  /** Regex sources tested against the secret: a secret that matches one is kept (documented examples). */
  allow?: readonly string[];
  /** Regex sources tested against the whole match (gitleaks' `regexTarget = "match"`). */
  allowMatch?: readonly string[];
  /** Regex sources tested against the line of the match (gitleaks' `regexTarget = "line"`). */
  allowLine?: readonly string[];
  /** Lower-case words: a secret that holds one is kept (gitleaks' stop words). */
  stopwords?: readonly string[];
  /**
   * A placeholder of this format is redacted too (`hf_xxxx...`, a Slack webhook of `XXXX`):
   * secretlint reports it. By default a provider token with a placeholder run is kept.
   */
  redactPlaceholders?: boolean;
  /** A last check of the secret (and the whole match); `false` keeps the text. */
  check?: (secret: string, match: string) => boolean;
}
