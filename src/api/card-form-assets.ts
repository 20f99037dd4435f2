// The hosted card form's script and style, served as files of the gateway's own origin
// (/elements/card.js, /elements/card.css) so the page's CSP can be script-src 'self' with no inline
// script or style. The script reads the publishable key and the merchant's origins from the form's
// data attributes, posts the card to /v1/tokens (same origin: no CORS), and hands the parent page
// the payment method with postMessage, naming each allowed origin as the target (never '*'): the
// browser delivers it only when the parent is that origin. The inputs have no name attribute, so
// no form submission (and no URL) can ever carry the card; the CSP's form-action 'none' backs that.
// Plain ES2017 for every browser a checkout meets; no third-party code.

export const CARD_FORM_SCRIPT = `(function () {
  'use strict';
  var form = document.getElementById('sy-card');
  var key = form.getAttribute('data-key');
  var origins = JSON.parse(form.getAttribute('data-origins'));
  var status = document.getElementById('sy-status');
  var button = document.getElementById('sy-save');
  var ids = ['number', 'exp_month', 'exp_year', 'cvc', 'holder_name'];
  function input(name) { return document.getElementById('sy-' + name); }
  function tell(message) {
    if (window.parent === window) return;
    for (var i = 0; i < origins.length; i++) window.parent.postMessage(message, origins[i]);
  }
  function show(text, isError) {
    status.textContent = text;
    status.className = isError ? 'error' : 'ok';
  }
  function clearInvalid() {
    for (var i = 0; i < ids.length; i++) input(ids[i]).removeAttribute('aria-invalid');
  }
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    clearInvalid();
    var card = {
      number: input('number').value,
      exp_month: parseInt(input('exp_month').value, 10),
      exp_year: parseInt(input('exp_year').value, 10),
      cvc: input('cvc').value
    };
    var holder = input('holder_name').value.trim();
    if (holder !== '') card.holder_name = holder;
    button.disabled = true;
    show('Saving…', false);
    fetch('/v1/tokens', {
      method: 'POST',
      headers: { 'Authorization': 'Bearer ' + key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ card: card }),
      credentials: 'omit',
      cache: 'no-store',
      referrerPolicy: 'no-referrer'
    }).then(function (res) {
      return res.json().then(function (body) { return { status: res.status, body: body }; });
    }).then(function (r) {
      button.disabled = false;
      if (r.status === 201) {
        for (var i = 0; i < ids.length; i++) input(ids[i]).value = '';
        show('Card saved: ' + r.body.card.brand + ' ending ' + r.body.card.last4, false);
        tell({ type: 'switchyard.payment_method', payment_method: r.body });
        return;
      }
      var first = r.body && r.body.errors && r.body.errors[0];
      var field = first ? first.path : null;
      if (field && field.indexOf('card.') === 0 && input(field.slice(5))) input(field.slice(5)).setAttribute('aria-invalid', 'true');
      show(first ? first.message : (r.body && r.body.detail) || 'The card could not be saved.', true);
      tell({ type: 'switchyard.error', code: (r.body && r.body.code) || 'error', field: field });
    }).catch(function () {
      button.disabled = false;
      show('The card could not be saved: please try again.', true);
      tell({ type: 'switchyard.error', code: 'network_error', field: null });
    });
  });
  tell({ type: 'switchyard.ready' });
})();
`;

export const CARD_FORM_STYLE = `body { font: 15px/1.4 system-ui, sans-serif; margin: 0; padding: 8px; color: #222; }
form { display: grid; gap: 8px; max-width: 420px; }
label { display: grid; gap: 2px; font-size: 13px; }
input { font: inherit; padding: 6px 8px; border: 1px solid #bbb; border-radius: 4px; }
input[aria-invalid="true"] { border-color: #c00; }
.row { display: grid; grid-template-columns: 1fr 1fr 1fr; gap: 8px; }
button { font: inherit; padding: 8px; border: 0; border-radius: 4px; background: #2a5bd7; color: #fff; cursor: pointer; }
button:disabled { opacity: .6; }
#sy-status.error { color: #c00; }
#sy-status.ok { color: #176b2c; }
`;
