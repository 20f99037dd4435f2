// Why Adyen says a capture or cancel did not happen, when the reason is that it already had.
// Adyen documents no code for a failed modification: a CAPTURE or CANCELLATION notification with
// success=false carries only `reason`, "a short message with an explanation for the refusal"
// (Webhooks v1, CaptureNotificationRequestItem / CancellationNotificationRequestItem), and the
// modification endpoints answer 201 `received` whatever happens next (Checkout v72). So this is a
// closed table of exact texts, per event code, never a search for words in free text: a text not
// listed stays the operation's failure. Adyen publishes none of these texts; they are the wording
// of the gateway's sandbox (src/sandboxes/adyen/modifications.ts keeps its own copy), to be
// extended with live Adyen's wording once seen. The same text can mean different things per code:
// "already captured" on a CAPTURE is our capture done, on a CANCELLATION it is a real refusal.

export const ALREADY_DONE_REASONS: Readonly<Record<'CAPTURE' | 'CANCELLATION', readonly string[]>> = Object.freeze({
  CAPTURE: Object.freeze(['Payment has already been captured']),
  CANCELLATION: Object.freeze(['Payment has already been cancelled']),
});

/** The operation an "already done" failure notification is about, or null for any other item. */
export function alreadyDoneOp(eventCode: string, success: string, reason: string | undefined): 'capture' | 'void' | null {
  if (success !== 'false' || reason === undefined) return null;
  const text = reason.trim();
  if (eventCode === 'CAPTURE') return ALREADY_DONE_REASONS.CAPTURE.includes(text) ? 'capture' : null;
  if (eventCode === 'CANCELLATION') return ALREADY_DONE_REASONS.CANCELLATION.includes(text) ? 'void' : null;
  return null;
}
