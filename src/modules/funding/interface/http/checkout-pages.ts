import { displayAmount } from '../../domain/checkout-amount';
import { returnLocation } from '../../domain/top-up';
import { SimSession } from '../../infrastructure/simulated-checkout';

/** The merchant the customer pays: the service itself (the organization is who pays). */
export const MERCHANT = 'Cloud Disk Service';

export const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** An instant as the page shows it: "28 Nov 2026, 14:05 UTC". */
function instant(d: Date): string {
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCDate()} ${months[d.getUTCMonth()]} ${d.getUTCFullYear()}, ${two(d.getUTCHours())}:${two(d.getUTCMinutes())} UTC`;
}

/**
 * One page of the hosted checkout: no script (the CSP allows none), inline styles only, a layout
 * that fits a phone (fluid width, buttons full width below 30rem, nothing wider than the screen).
 */
export function checkoutPage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · ${MERCHANT}</title>
<style>
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f4f6f8;color:#1a1a1a;line-height:1.45}
main{max-width:30rem;margin:3rem auto;padding:0 1rem}
.card{background:#fff;border:1px solid #dde2e8;border-radius:.75rem;padding:1.5rem;box-shadow:0 1px 3px rgba(0,0,0,.06)}
.merchant{font-weight:600;color:#1f3a5f;margin:0 0 1rem;font-size:.95rem;letter-spacing:.02em}
h1{font-size:1.35rem;margin:0 0 .75rem}
.amount{font-size:2.2rem;font-weight:700;margin:.5rem 0 1rem;word-break:break-word}
.amount #currency{font-size:1rem;font-weight:500;color:#555;margin-left:.35rem}
dl{display:grid;grid-template-columns:auto 1fr;gap:.35rem 1rem;margin:0 0 1.25rem;font-size:.95rem}
dt{color:#555}
dd{margin:0;word-break:break-all}
.actions{display:flex;gap:.75rem;flex-wrap:wrap}
form{margin:0}
button,.button{display:inline-block;font-size:1rem;padding:.75rem 1.5rem;border-radius:.5rem;border:1px solid #8a96a3;background:#fff;color:#1a1a1a;cursor:pointer;text-decoration:none;text-align:center}
#pay{background:#1f6feb;color:#fff;border-color:#1f6feb;font-weight:600}
.ok{color:#1a7f37}
.warn{color:#9a6700}
.note{color:#666;font-size:.85rem;margin-top:1.25rem}
@media (max-width:30rem){main{margin:1rem auto}.card{padding:1.1rem}.actions{flex-direction:column}.actions form,.actions button,.actions .button{width:100%}}
</style>
</head>
<body>
<main>
<div class="card">
<p class="merchant">${MERCHANT}</p>
${body}
</div>
</main>
</body>
</html>
`;
}

/** The amount, the organization and the reference: what every state of a session shows. */
function summary(s: SimSession): string {
  return `<p class="amount"><span id="amount" data-value="${escapeHtml(s.amount.format())}">${escapeHtml(displayAmount(s.amount))}</span><span id="currency">${s.amount.currency}</span></p>
<dl>
<dt>Organization</dt><dd id="organization">${escapeHtml(s.organizationName)}</dd>
<dt>Reference</dt><dd id="reference">${escapeHtml(s.topUpId)}</dd>
<dt>Status</dt><dd><span id="status">${s.status}</span></dd>
${s.status === 'open' ? `<dt>Pay before</dt><dd id="expires">${instant(s.expiresAt)}</dd>\n` : ''}</dl>`;
}

/** A link back to the customer's return_url (with the top-up and, for paid or canceled, the outcome); none without one. */
function backLink(s: SimSession): string {
  if (!s.returnUrl) return '';
  let href: string;
  if (s.status === 'paid' || s.status === 'canceled') {
    href = returnLocation(s.returnUrl, s.topUpId, s.status);
  } else {
    const url = new URL(s.returnUrl);
    url.searchParams.append('top_up_id', s.topUpId);
    href = url.toString();
  }
  return `<div class="actions"><a id="back" class="button" href="${escapeHtml(href)}">Return to ${escapeHtml(new URL(s.returnUrl).host)}</a></div>`;
}

/** The page of a session in its state: open (Pay, Cancel), paid, canceled or expired (what to do next). */
export function sessionPage(s: SimSession): string {
  const simulated = '<p class="note">Simulated payment provider: no card is charged.</p>';
  switch (s.status) {
    case 'open':
      return checkoutPage(
        'Wallet top-up',
        `<h1 id="title">Top up the wallet of ${escapeHtml(s.organizationName)}</h1>
${summary(s)}
<div class="actions">
<form method="post" action="/checkout/${escapeHtml(s.id)}/pay"><button id="pay" type="submit">Pay ${escapeHtml(displayAmount(s.amount))}</button></form>
<form method="post" action="/checkout/${escapeHtml(s.id)}/cancel"><button id="cancel" type="submit">Cancel</button></form>
</div>
${simulated}`,
      );
    case 'paid':
      return checkoutPage(
        'Payment received',
        `<h1 id="title" class="ok">Payment received</h1>
<p id="message">Thank you. ${escapeHtml(displayAmount(s.amount))} is being added to the wallet of ${escapeHtml(s.organizationName)}; it shows in the wallet within a minute. Keep the reference for your records.</p>
${summary(s)}
${s.returnUrl ? backLink(s) : '<p class="note">You can close this page.</p>'}`,
      );
    case 'canceled':
      return checkoutPage(
        'Payment canceled',
        `<h1 id="title" class="warn">Payment canceled</h1>
<p id="message">Nothing was charged. To add funds, start a new top-up from your account (this checkout cannot be used again).</p>
${summary(s)}
${backLink(s)}`,
      );
    case 'expired':
      return checkoutPage(
        'Checkout expired',
        `<h1 id="title" class="warn">This checkout has expired</h1>
<p id="message">Nothing was charged. The time to pay ran out at ${instant(s.expiresAt)}; start a new top-up from your account to add funds.</p>
${summary(s)}
${backLink(s)}`,
      );
  }
}
