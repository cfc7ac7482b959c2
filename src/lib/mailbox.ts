/**
 * Providers whose mailboxes ignore dots in the local part (`j.doe@gmail.com` is `jdoe@gmail.com`);
 * googlemail.com is gmail.com.
 */
const DOTLESS: Record<string, string> = { "gmail.com": "gmail.com", "googlemail.com": "gmail.com" };

/**
 * The mailbox an address delivers to: lower-cased, a `+tag` dropped (`x+1@example.com` is
 * `x@example.com`), and for providers that ignore dots (DOTLESS) the dots dropped too. Addresses
 * with one mailbox reach one person: what is given once per person (the free allowance) counts
 * by this, what is bought (a paid plan) by account.
 */
export function mailboxOf(address: string): string {
  const at = address.lastIndexOf("@");
  if (at < 1) return address.trim().toLowerCase();
  const domain = address
    .slice(at + 1)
    .trim()
    .toLowerCase();
  let local = address.slice(0, at).trim().toLowerCase();
  const plus = local.indexOf("+");
  if (plus > 0) local = local.slice(0, plus);
  const dotless = DOTLESS[domain];
  if (dotless === undefined) return `${local}@${domain}`;
  return `${local.replaceAll(".", "")}@${dotless}`;
}

/** The pool of the free allowance of `address`'s mailbox (a row of `account_quotas`). */
export const mailboxPool = (address: string): string => `mailbox:${mailboxOf(address)}`;
