import { describe, expect, it } from "vitest";
import { mailboxOf } from "../../src/lib/mailbox.js";

describe("mailboxOf: one free allowance per mailbox", () => {
  it.each([
    ["x@example.com", "x@example.com"],
    ["x+1@example.com", "x@example.com"],
    ["X+Tag+More@Example.COM", "x@example.com"],
    ["first.last@example.com", "first.last@example.com"],
    ["first.last+news@gmail.com", "firstlast@gmail.com"],
    ["F.i.R.s.T.last@googlemail.com", "firstlast@gmail.com"],
    ["+only@example.com", "+only@example.com"],
  ])("%s is the mailbox %s", (address, mailbox) => {
    expect(mailboxOf(address)).toBe(mailbox);
  });
});
