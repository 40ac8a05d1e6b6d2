// The CustomerRepository contract against LMDB.
import t from 'tap';
import { LmdbCustomerRepository } from '../dist/src/records/lmdb/ussd/customers.js';
import { customerRepositoryContract } from './contracts/customers.js';
import { tempStore } from './helpers/store.js';

customerRepositoryContract(t, async (t) => new LmdbCustomerRepository(tempStore(t, 'repo-customers--')));
