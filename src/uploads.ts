import type { IncomingMessage } from 'node:http';
import type { App, Route } from './app';
import type { Body } from './http/body';
import { HttpError } from './http/errors';

/** A file of a multipart message, already on disk under its attachment id. */
export interface ReceivedFile {
  id: string;
  name: string;
  contentType: string;
  size: number;
  previewKind: 'code' | 'image' | 'audio' | 'video';
}

export interface UploadStore {
  /** Streams a multipart message body to disk: its text fields and its files. */
  receive(req: IncomingMessage): Promise<{ fields: Body; files: ReceivedFile[] }>;
  /** Removes files of a request that did not become a message. */
  discard(files: ReceivedFile[]): void;
  /** Removes the files of deleted attachments (after the delete committed). */
  deleteFiles(attachmentIds: string[]): void;
}

// Placeholder until the attachments issue.
export function createUploadStore(_app: App): UploadStore {
  return {
    receive: async () => {
      throw new HttpError(415, 'attachments are not supported yet');
    },
    discard: () => {},
    deleteFiles: () => {},
  };
}

export function uploadsRoutes(_app: App): Route[] {
  return [];
}
