// The retry plan every retry scenario runs: a tenth of the load delayed once, about one message in
// a hundred always failing (dead-lettered after its three attempts).
export const retryPlan = {
  delayEvery: 10,
  delayMs: 1_500,
  failEvery: 97,
  maxAttempts: 3,
  deadLetterBy: "runtime",
} as const;
