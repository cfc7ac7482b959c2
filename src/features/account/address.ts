import { z } from "zod";

/**
 * An address a sign-in code can be mailed to: an e-mail address within RFC 5321's lengths (local
 * part 64, each domain label 63, 254 in all), which mail servers refuse beyond. Checked before
 * anything is spent or sent, on the page and the API alike, so a bad address is the client's 400,
 * never the mail lane's 502.
 */
export const SignInAddress = z
  .email()
  .max(254)
  .refine((a) => {
    const at = a.lastIndexOf("@");
    return (
      at <= 64 &&
      a
        .slice(at + 1)
        .split(".")
        .every((label) => label.length <= 63)
    );
  });
