/** Node only: email through SMTP with nodemailer (STARTTLS or TLS, optional login). */
import { isIP } from "node:net";
import nodemailer from "nodemailer";
import type { EmailSender } from "./transports.ts";
import { DeliveryError } from "./transports.ts";

export const sendEmail: EmailSender = async (channel, message, address) => {
  const smtp = channel.smtp!;
  const transport = nodemailer.createTransport({
    // The address the outbound guard checked, not a second lookup of the name; TLS still verifies the name.
    host: address ?? smtp.host,
    tls: isIP(smtp.host) ? undefined : { servername: smtp.host },
    port: smtp.port,
    secure: smtp.use_tls && smtp.port === 465, // implicit TLS on 465; STARTTLS required elsewhere when use_tls
    requireTLS: smtp.use_tls && smtp.port !== 465,
    ignoreTLS: !smtp.use_tls,
    auth: smtp.username ? { user: smtp.username, pass: smtp.password ?? "" } : undefined,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 10_000,
  });
  try {
    await transport.sendMail({
      from: { name: channel.from_name ?? "pglens", address: channel.from_address! },
      to: message.to,
      subject: message.subject,
      text: message.text,
      html: message.html,
    });
  } catch (err) {
    throw new DeliveryError(`the SMTP server refused: ${(err as Error).message}`);
  } finally {
    transport.close();
  }
};
