// Thread: main
// ixo.iid.v1beta1.Query over the sample data.
import { pageBy, recordBy, type QueryHandler } from '../query-handler.js';

export const iidQueries: Record<string, QueryHandler> = {
  IidDocuments: pageBy('iidDocument', 'iidDocuments'),
  IidDocument: recordBy('iidDocument', 'iidDocument', 'did document', 'id'),
};
