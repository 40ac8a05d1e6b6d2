// Thread: any (shared, pure)
// Chat-network attachments of a user's message (`attachments` of SendMessageDto): kept with the human message,
// listed in the history, and given to the model: described in text always, and, for a model that reads images,
// an image whose media the user's homeserver serves as an image part too.

/** One attachment as the client sent it (schemas.ts AttachmentSchema). */
export interface Attachment {
  mxcUri?: string;
  eventId?: string;
  filename: string;
  mimetype: string;
  size?: number;
  category?: string;
}

/** An attachment as the model gets it: with `url` when its media can be fetched over HTTP (an image part). */
export interface ModelAttachment extends Attachment {
  url?: string;
}

const MXC = /^mxc:\/\/([^/\s]+)\/([^/\s?#]+)$/;

/**
 * The media download URL of an `mxc://server/id` on the user's homeserver (`homeServer` of the message, a host
 * or a URL); undefined without either. The homeserver must serve that media to the model's provider.
 */
export function mediaUrl(mxcUri: string | undefined, homeServer: string | undefined): string | undefined {
  const parts = mxcUri?.match(MXC);
  if (!parts || !homeServer) return undefined;
  let base: URL;
  try {
    base = new URL(/^https?:\/\//i.test(homeServer) ? homeServer : `https://${homeServer}`);
  } catch {
    return undefined;
  }
  const path = `/_matrix/media/v3/download/${encodeURIComponent(parts[1])}/${encodeURIComponent(parts[2])}`;
  return new URL(path, base.origin).toString();
}

/** For the model: each attachment's `url` set when it is an image whose media URL is known. */
export function forModel(attachments: readonly Attachment[], homeServer: string | undefined): ModelAttachment[] {
  return attachments.map((attachment) => {
    const url = attachment.mimetype.startsWith('image/') ? mediaUrl(attachment.mxcUri, homeServer) : undefined;
    return url ? { ...attachment, url } : { ...attachment };
  });
}

function sizeText(size: number): string {
  if (size < 1024) return `${size} bytes`;
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} KB`;
  return `${(size / (1024 * 1024)).toFixed(1)} MB`;
}

/** One line per attachment, as text a model reads (name, type, size, where it is). */
export function describeAttachments(attachments: readonly Attachment[]): string {
  const lines = attachments.map((a) => {
    const facts = [
      a.mimetype,
      ...(a.size !== undefined ? [sizeText(a.size)] : []),
      ...(a.category ? [a.category] : []),
    ];
    const where = a.mxcUri ? a.mxcUri : `chat event ${a.eventId}`;
    return `- ${a.filename} (${facts.join(', ')}): ${where}`;
  });
  return `The user attached ${attachments.length === 1 ? 'a file' : `${attachments.length} files`}:\n${lines.join('\n')}`;
}

/** The user's text with its attachments described after it. */
export function withAttachmentsText(content: string, attachments: readonly Attachment[] | undefined): string {
  return attachments?.length ? `${content}\n\n${describeAttachments(attachments)}` : content;
}
