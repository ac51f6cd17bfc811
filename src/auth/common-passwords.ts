/**
 * Passwords long enough to pass the length rule that attackers try first anyway: keyboard walks, repeated
 * words, digit runs, and common words padded with digits. Compared lower-cased, spaces removed.
 */
const WORDS = ["password", "passw0rd", "qwerty", "letmein", "welcome", "admin", "administrator", "iloveyou", "monkey", "dragon", "football", "baseball", "sunshine", "princess", "master", "shadow", "superman", "trustno1", "changeme", "postgres", "postgresql", "database", "secret", "default", "abc123", "login", "pglens"];
const PADDING = ["", "1", "12", "123", "1234", "12345", "123456", "2024", "2025", "2026", "!", "1!", "123!", "!@#"];
const LITERAL = [
  "123456789012", "1234567890123", "12345678901234", "123456789012345", "1234567890123456", "098765432112", "111111111111",
  "000000000000", "121212121212", "123123123123", "qwertyuiopas", "qwertyuiop12", "qwertyuiop123", "qwertyuiop1234",
  "1q2w3e4r5t6y", "1q2w3e4r5t6y7u", "1qaz2wsx3edc", "1qaz2wsx3edc4rfv", "zaq12wsxcde3", "zaq1zaq1zaq1", "asdfghjkl123",
  "asdfghjkl;'", "zxcvbnm12345", "qazwsxedcrfv", "abcdefghijkl", "abcdefghijklm", "abcd1234abcd", "aaaaaaaaaaaa",
  "passwordpassword", "adminadminadmin", "correcthorsebatterystaple", "letmeinletmein", "iloveyouiloveyou",
];

export const COMMON_PASSWORDS: ReadonlySet<string> = new Set([...LITERAL, ...WORDS.flatMap((w) => PADDING.map((p) => w + p)), ...WORDS.map((w) => w + w)]);
