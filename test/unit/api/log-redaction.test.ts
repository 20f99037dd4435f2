// Log redaction (issue 42 §3): provider secrets, 3-D Secure evidence, Adyen API keys and card
// numbers written any way people write them never reach a log line.
import { describe, expect, it } from 'vitest';
import { redact } from '../../../src/api/log-redaction.ts';

describe('redact', () => {
  it("masks Stripe client secrets wherever they appear", () => {
    const secret = 'pi_3MtwBwLkdIwHu7ix28a3tqPa_secret_YrKJUKribcBjcG8HVhfZluoGH';
    const lines = [
      `redirect https://hooks.stripe.com/3d_secure_2/hosted?payment_intent=pi_3MtwBwLkdIwHu7ix28a3tqPa&payment_intent_client_secret=${secret}&return_url=x`,
      `params: {"client_secret":"${secret}","status":"requires_action"}`,
      `setup seti_1Mm8s8LkdIwHu7ix0OXBfTRG_secret_NXDICkPqPeiBTAFqWmkbff09lRmSVXe`,
      `client_secret: abc123def456`,
    ];
    for (const line of lines) {
      const out = redact(line);
      expect(out, line).not.toMatch(/_secret_[A-Za-z0-9]/);
      expect(out, line).not.toContain('YrKJUKribcBjcG8HVhfZluoGH');
      expect(out, line).not.toContain('abc123def456');
      expect(out, line).toContain('[secret]');
    }
    expect(redact(lines[0]!)).toContain('payment_intent=pi_3MtwBwLkdIwHu7ix28a3tqPa&payment_intent_client_secret=[secret]&return_url=x');
  });

  it('masks PaRes and redirectResult values in forms, queries and JSON', () => {
    const lines = [
      'params: PaRes=eJzVWFmTokgQfudXGL2PE7IUFFCGbWwU4I2N4o1viC2Cq2KmIWPmgW-xT5oBCsOQ%2FF&MD=abc',
      'return?redirectResult=X6XtfGC3%21Y3NVcWxR1Zm0sa1ScXp0&x=1',
      '{"redirectResult":"Ab02b4c0!BQABAgCW5sxB4e","PaRes":"eJzVWFmTokgQ"}',
    ];
    for (const line of lines) {
      const out = redact(line);
      expect(out, line).not.toMatch(/eJzV|X6XtfGC3|Ab02b4c0/);
      expect(out, line).toMatch(/(PaRes|redirectResult)["']?[=:]["']?\[secret\]/);
    }
  });

  it('masks Adyen API keys and Basic credentials', () => {
    const key = 'AQEyhmfxK4PJahZCw0m/n3Q5qf3VaY9UCJ14XWZE03G/k2NFitRvbe4N1XqH1eHaH2AksaEQwV1bDb7kfNy1WIxIIkxgBw==-y3qzswmlmALhxaVPNjYf74bqPotG12HroatrKA066yE=-W+t7NF;s4}%=kUSD';
    const out = redact(`adyen: x-api-key ${key} refused; {"apiKey":"${key}"}; Authorization: Basic d3NAQ29tcGFueS5Td2l0Y2g6c2VjcmV0`);
    expect(out).not.toContain('AQEyhmfx');
    expect(out).not.toContain('kUSD');
    expect(out).not.toContain('d3NAQ29t');
  });

  it('masks card numbers with spaces or dashes, joined to words, and cut ones; keeps other numbers', () => {
    expect(redact('card 4242 4242 4242 4242 and 5555-5555-5555-4444 and ORD4242424242424242')).toBe('card [card] and [card] and ORD[card]');
    // A cut PAN (a message sliced mid-number) fails Luhn but is still most of a card: unbroken runs of 12+ digits go.
    expect(redact('...4242424242424 (cut)')).toBe('...[card] (cut)');
    expect(redact('at 2025-12-02 10:00:00, order 42, attempt 3')).toBe('at 2025-12-02 10:00:00, order 42, attempt 3');
  });

  it('is idempotent (the API and the logger may both redact a line)', () => {
    const line = 'payment_intent_client_secret=pi_1_secret_2&PaRes=abc 4242-4242-4242-4242 AQE1234567890 Bearer x sk_test_1 postgres://u:pw@h/db';
    expect(redact(redact(line))).toBe(redact(line));
  });
});
